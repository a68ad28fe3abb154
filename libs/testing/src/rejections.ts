/**
 * What `promise` rejects with; fails the test when it resolves instead. Typed loosely so a test can read the
 * fields of the SDK or transport error it expects.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}
