import { useState, type FormEvent } from 'react';
import type { Device } from '../../api/types';
import { useDevices, useRenameDevice, useUnlinkDevice } from '../../hooks/use-devices';
import { ConfirmDialog, Dialog } from '../../ui/dialog';
import { count, dateTime } from '../../ui/format';
import { Page } from '../../ui/page';
import { ErrorState, QueryView } from '../../ui/states';
import { Table } from '../../ui/table';

const counted = (n: number, noun: string) => `${count(n)} ${noun}${n === 1 ? '' : 's'}`;

function capabilities(device: Device): string {
  const held = device.capabilities;
  if (!held) return 'Not reported';
  const parts = [
    counted(held.tools_count, 'tool'),
    held.held_vendors.length > 0 && `vendors: ${held.held_vendors.join(', ')}`,
    held.held_models.length > 0 && counted(held.held_models.length, 'model'),
    held.helper_version && `helper ${held.helper_version}`,
  ].filter(Boolean);
  return parts.join('; ');
}

/** Paired devices: whether each is online, what it can do; rename and unlink. */
export function DevicesPage() {
  const devices = useDevices();
  const rename = useRenameDevice();
  const unlink = useUnlinkDevice();
  const [renaming, setRenaming] = useState<Device>();
  const [label, setLabel] = useState('');
  const [unlinking, setUnlinking] = useState<Device>();

  const submitRename = (event: FormEvent) => {
    event.preventDefault();
    if (renaming) rename.mutate({ id: renaming.id, label }, { onSuccess: () => setRenaming(undefined) });
  };

  return (
    <Page title="Devices">
      <p>
        Devices and tools paired with your account. A device is online while it has reported in over the last minute and
        a half.
      </p>
      <QueryView
        query={devices}
        what="your devices"
        empty={(page) => page.data.length === 0}
        emptyMessage={<p>No paired devices yet. A device pairs by showing a code you approve at Device activation.</p>}
      >
        {(page) => (
          <Table<Device>
            caption="Paired devices"
            rows={page.data}
            rowKey={(device) => device.id}
            columns={[
              { header: 'Name', cell: (device) => device.label },
              {
                header: 'Kind',
                cell: (device) => (device.agent ? `${device.kind} (${device.agent.agent_vendor})` : device.kind),
              },
              { header: 'State', cell: (device) => (device.online ? 'Online' : 'Offline') },
              {
                header: 'Last seen',
                cell: (device) => (device.last_seen_at ? dateTime(device.last_seen_at) : 'Never'),
              },
              { header: 'Capabilities', cell: capabilities },
              { header: 'Paired', cell: (device) => dateTime(device.created_at) },
              {
                header: 'Actions',
                cell: (device) => (
                  <div className="actions">
                    <button
                      type="button"
                      aria-label={`Rename ${device.label}`}
                      onClick={() => (rename.reset(), setLabel(device.label), setRenaming(device))}
                    >
                      Rename
                    </button>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Unlink ${device.label}`}
                      onClick={() => (unlink.reset(), setUnlinking(device))}
                    >
                      Unlink
                    </button>
                  </div>
                ),
              },
            ]}
          />
        )}
      </QueryView>

      <Dialog open={!!renaming} title="Rename device" onClose={() => setRenaming(undefined)}>
        <form onSubmit={submitRename} className="stack">
          <label>
            Name
            <input required maxLength={64} value={label} onChange={(e) => setLabel(e.target.value)} />
          </label>
          {rename.error && <ErrorState error={rename.error} />}
          <div className="actions">
            <button type="button" onClick={() => setRenaming(undefined)}>
              Cancel
            </button>
            <button type="submit" disabled={rename.isPending || !label.trim()}>
              Save name
            </button>
          </div>
        </form>
      </Dialog>

      <ConfirmDialog
        open={!!unlinking}
        title="Unlink this device?"
        body={
          <>
            <p>
              <strong>{unlinking?.label}</strong> loses access at once: its next call is refused. It can pair again with
              a new code.
            </p>
            {unlink.error && <ErrorState error={unlink.error} />}
          </>
        }
        confirmLabel="Unlink device"
        busy={unlink.isPending}
        onConfirm={() => unlinking && unlink.mutate(unlinking.id, { onSuccess: () => setUnlinking(undefined) })}
        onClose={() => setUnlinking(undefined)}
      />
    </Page>
  );
}
