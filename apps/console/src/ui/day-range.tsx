/** A filter's UTC day range, as two date fields inside the filter form; an emptied field clears its end. */
export function DayRangeFields({
  from,
  to,
  onChange,
}: {
  from?: string;
  to?: string;
  onChange: (patch: { from?: string } | { to?: string }) => void;
}) {
  return (
    <>
      <label>
        From day (UTC)
        <input type="date" value={from ?? ''} onChange={(e) => onChange({ from: e.target.value || undefined })} />
      </label>
      <label>
        To day (UTC)
        <input type="date" value={to ?? ''} onChange={(e) => onChange({ to: e.target.value || undefined })} />
      </label>
    </>
  );
}
