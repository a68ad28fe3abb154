/**
 * Why a person meets the sign-in page on their way to `next`, when it is not the obvious reason. A session
 * belongs to the host name it was made at, so someone signed in at 127.0.0.1 who follows a link to localhost
 * (a device's verification URI, an invite link) is signed out there; saying so beats a bare sign-in form.
 */
export function signInReason(next: string | null, host: string): string | undefined {
  if (!next) return undefined;
  const elsewhere =
    'A session is kept per address, so signing in at another one (such as localhost or 127.0.0.1) ' +
    `does not count at ${host}.`;
  if (next.startsWith('/console/device'))
    return `Sign in to approve the device that asked for access; the approval opens again afterwards. ${elsewhere}`;
  if (next.startsWith('/console/invite'))
    return `Sign in as the address the invite was sent to; the invite opens again afterwards. ${elsewhere}`;
  return undefined;
}
