// The checksums that tell a payment card number or an IBAN from any run of digits.

/** Luhn (mod 10) over the digits of `digits`, as card numbers carry it. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index--) {
    let digit = digits.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return false;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

const IBAN_SHAPE = /^[A-Z]{2}\d{2}[A-Z0-9]+$/;

/** ISO 13616 mod-97 over an IBAN without spaces (upper case letters and digits). */
export function ibanValid(iban: string): boolean {
  if (iban.length < 15 || iban.length > 34 || !IBAN_SHAPE.test(iban)) return false;
  let remainder = 0;
  for (let index = 0; index < iban.length; index++) {
    // Read from the fifth character on, the first four last; a letter counts as its two digits (A is 10).
    const code = iban.charCodeAt((index + 4) % iban.length);
    remainder = code >= 65 ? (remainder * 100 + code - 55) % 97 : (remainder * 10 + code - 48) % 97;
  }
  return remainder === 1;
}
