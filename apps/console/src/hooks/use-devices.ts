import { useApiMutation, useApiQuery } from '../api/queries';
import { approveDevicePairing, denyDevicePairing, listDevices, renameDevice, unlinkDevice } from '../api/routes';

// Shared: the activation page pairs devices, the Devices page lists, renames and unlinks them.
const DEVICES = () => ['/v1/devices'];
const byCode = (userCode: string) => ({ body: { user_code: userCode.trim() } });

export const useDevices = () => useApiQuery(listDevices, { query: { limit: 100 } });
export const useApprovePairing = () => useApiMutation(approveDevicePairing, { input: byCode, invalidates: DEVICES });
export const useDenyPairing = () => useApiMutation(denyDevicePairing, { input: byCode, invalidates: DEVICES });
export const useRenameDevice = () =>
  useApiMutation(renameDevice, {
    input: ({ id, label }: { id: string; label: string }) => ({ params: { device_id: id }, body: { label } }),
    invalidates: DEVICES,
  });
export const useUnlinkDevice = () =>
  useApiMutation(unlinkDevice, { input: (id: string) => ({ params: { device_id: id } }), invalidates: DEVICES });
