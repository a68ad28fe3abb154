import { signInReason } from './sign-in-reason';

describe('why the sign-in page is shown', () => {
  it('names the device approval and the host name a session belongs to', () => {
    const reason = signInReason('/console/device?user_code=ABCD-EFGH', 'localhost:8080');
    expect(reason).toMatch(/^Sign in to approve the device/);
    expect(reason).toContain('does not count at localhost:8080');
  });

  it('names the invitee for an invite link', () => {
    expect(signInReason('/console/invite?code=x', '127.0.0.1:8080')).toMatch(/address the invite was sent to/);
  });

  it('says nothing extra for any other page', () => {
    expect(signInReason('/console/usage', 'localhost')).toBeUndefined();
    expect(signInReason(null, 'localhost')).toBeUndefined();
  });
});
