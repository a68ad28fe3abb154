// lz4js ships no types: the two functions the kafkajs codec uses (LZ4 frame format in, and out).
declare module 'lz4js' {
  export function compress(source: Uint8Array): Uint8Array;
  export function decompress(source: Uint8Array): Uint8Array;
}
