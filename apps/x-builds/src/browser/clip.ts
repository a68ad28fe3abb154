import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** One screencast frame: a JPEG and when Chromium painted it (seconds, its own clock). */
export interface Frame {
  jpeg: Buffer;
  at: number;
}

export interface Clip {
  contentType: string;
  body: Buffer;
}

/** A video encoder this machine's ffmpeg has, best first: H.264 in MP4 plays everywhere, VP9/VP8 in WebM nearly. */
interface Encoder {
  name: string;
  contentType: string;
  format: string;
  args: string[];
}

const ENCODERS: Encoder[] = [
  {
    name: 'libx264',
    contentType: 'video/mp4',
    format: 'mp4',
    args: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '28', '-movflags', '+faststart'],
  },
  {
    name: 'libvpx-vp9',
    contentType: 'video/webm',
    format: 'webm',
    args: ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-crf', '36', '-b:v', '0'],
  },
  {
    name: 'libvpx',
    contentType: 'video/webm',
    format: 'webm',
    args: ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-crf', '20', '-b:v', '2M'],
  },
];

/**
 * Frames per second of the clip: frames are resampled to it, so a page that paints rarely still plays its full length.
 */
const CLIP_FPS = 20;
/** The bitrate is capped so a 5 s clip stays well inside one gRPC message (4 MB) when the edge fetches it. */
const MAX_BITRATE = ['-maxrate', '4M', '-bufsize', '8M'];
const ENCODE_TIMEOUT_MS = 60_000;

/**
 * Which captured frame shows at each tick of a constant-rate clip from `start` to `end` (seconds): the last one
 * painted at or before the tick, or the first one for ticks before any was painted. Chromium sends a frame
 * only when the page changes, so a still page gives one frame repeated and an animation one per paint.
 */
export function resample(times: number[], start: number, end: number, fps: number): number[] {
  if (times.length === 0 || end <= start) return [];
  const ticks = Math.max(1, Math.round((end - start) * fps));
  const picks: number[] = [];
  let index = 0;
  for (let tick = 0; tick < ticks; tick += 1) {
    const at = start + tick / fps;
    while (index + 1 < times.length && times[index + 1]! <= at) index += 1;
    picks.push(index);
  }
  return picks;
}

let available: Promise<Encoder | undefined> | undefined;

/** The best encoder of the ffmpeg on PATH (asked once per process), or undefined without ffmpeg or any of them. */
function findEncoder(ffmpeg = 'ffmpeg'): Promise<Encoder | undefined> {
  available ??= new Promise((resolve) => {
    execFile(ffmpeg, ['-hide_banner', '-encoders'], { timeout: 10_000 }, (error, stdout) => {
      if (error) return resolve(undefined);
      const names = new Set(stdout.split('\n').map((line) => line.trim().split(/\s+/)[1]));
      resolve(ENCODERS.find((encoder) => names.has(encoder.name)));
    });
  });
  return available;
}

/**
 * Encodes frames into a clip of `end - start` seconds: JPEGs piped into ffmpeg at CLIP_FPS, written to a
 * temporary file (MP4 needs a seekable output to put its index first), read back and removed.
 */
export async function encodeClip(
  frames: Frame[],
  start: number,
  end: number,
  signal: AbortSignal,
): Promise<Clip | undefined> {
  const encoder = await findEncoder();
  const picks = resample(
    frames.map((frame) => frame.at),
    start,
    end,
    CLIP_FPS,
  );
  if (!encoder || picks.length === 0) return undefined;
  const dir = await mkdtemp(path.join(tmpdir(), 'xb-clip-'));
  const file = path.join(dir, `clip.${encoder.format}`);
  try {
    await new Promise<void>((resolve, reject) => {
      const args = [
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'image2pipe',
        '-c:v',
        'mjpeg',
        '-framerate',
        String(CLIP_FPS),
        '-i',
        'pipe:0',
      ];
      // Even dimensions and 4:2:0 chroma, which H.264 and most players need.
      args.push(
        '-vf',
        'scale=trunc(iw/2)*2:trunc(ih/2)*2,format=yuv420p',
        '-an',
        ...encoder.args,
        ...MAX_BITRATE,
        '-threads',
        '2',
        '-f',
        encoder.format,
        '-y',
        file,
      );
      const child = spawn('ffmpeg', args, { signal, timeout: ENCODE_TIMEOUT_MS, stdio: ['pipe', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2_000)));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}: ${stderr.trim()}`)),
      );
      // A frame repeated is written again: the demuxer reads one JPEG per tick.
      child.stdin.on('error', () => undefined);
      (async () => {
        for (const pick of picks) {
          if (!child.stdin.write(frames[pick]!.jpeg))
            await new Promise((drained) => child.stdin.once('drain', drained));
        }
        child.stdin.end();
      })().catch(reject);
    });
    return { contentType: encoder.contentType, body: await readFile(file) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
