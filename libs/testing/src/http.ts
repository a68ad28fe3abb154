/**
 * The parsed JSON body of a response, loosely typed so tests can assert on fields directly. (fetch's own
 * `json()` is typed `unknown` under Node's types.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function jsonOf(res: Response): Promise<any> {
  return res.json();
}
