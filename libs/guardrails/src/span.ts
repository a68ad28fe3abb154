/** Where a finding is in a text: UTF-16 offsets, `end` exclusive. */
export interface Span {
  start: number;
  end: number;
}
