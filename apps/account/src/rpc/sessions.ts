import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { ApiError } from '@sbc/errors';
import { KEY_REVOKED_CHANNEL } from '@sbc/events';
import { hashSecret, newId, newSecret } from '@sbc/ids';
import type { SessionService, UserSchema } from '@sbc/proto/sbc/account/v1/sessions_pb';
import type { RpcImplementation } from '@sbc/rpc';
import { hashPassword, UNMATCHABLE_PASSWORD_HASH, verifyPassword } from '../store/passwords';
import { createSession, createUser, endSession, findUserByEmail, type UserRow } from '../store/sessions';
import type { AccountServiceDeps } from './account-service';

/** CONTRACTS: a session lasts 30 days. */
const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;

// The edge validates bodies; these bounds also keep any other caller of the RPC from feeding scrypt a
// megabyte.
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 256;
const EMAIL_MAX = 254;

function invalid(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

function normaliseEmail(email: string): string {
  const normalised = email.trim().toLowerCase();
  if (normalised.length > EMAIL_MAX || !/^[^\s@]+@[^\s@]+$/.test(normalised))
    throw invalid('email', 'email must be an email address.');
  return normalised;
}

function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
    throw invalid('password', `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
}

function toProtoUser(user: UserRow): MessageInitShape<typeof UserSchema> {
  return { id: user.id, email: user.email, createdAt: timestampFromDate(user.createdAt) };
}

/** Sign-up, sign-in and sign-out. Passwords and tokens are never logged, stored in the clear or returned twice. */
export function createSessionService(deps: AccountServiceDeps): RpcImplementation<typeof SessionService> {
  const now = deps.now ?? (() => new Date());
  return {
    async signUp(request) {
      if (!deps.config?.signupEnabled)
        throw new ApiError('not_found', 'Sign-up is not enabled on this service; ask its operator for an account.');
      const email = normaliseEmail(request.email);
      checkPassword(request.password);
      const taken = () => new ApiError('conflict', 'A user with this email already exists.', { param: 'email' });
      // The bootstrap address belongs to the owner, an operator: a stranger must not claim it before the owner exists.
      if (email === deps.config.bootstrapEmail.toLowerCase()) throw taken();
      const user = await createUser(deps.db, {
        id: newId('usr'),
        email,
        passwordHash: await hashPassword(request.password),
      });
      if (!user) throw taken();
      return { user: toProtoUser(user) };
    },

    async createSession(request) {
      const refused = new ApiError('unauthorized', 'The email or password is wrong.');
      // Bounds give no hint about any account, so they may refuse before the lookup.
      if (request.password.length > PASSWORD_MAX) throw refused;
      const user = await findUserByEmail(deps.db, request.email.trim().toLowerCase());
      // An unknown email, or a user with no password (the bootstrap owner), still costs one scrypt.
      const matches = await verifyPassword(user?.passwordHash ?? UNMATCHABLE_PASSWORD_HASH, request.password);
      if (!user || !user.passwordHash || !matches) throw refused;
      const token = newSecret('sbs');
      const expiresAt = new Date(now().getTime() + SESSION_TTL_MS);
      await createSession(deps.db, { tokenHash: hashSecret(token), userId: user.id, expiresAt });
      return { token, expiresAt: timestampFromDate(expiresAt), user: toProtoUser(user) };
    },

    async endSession(request) {
      if (request.tokenSha256.length !== 32) throw invalid('token_sha256', 'token_sha256 must be 32 bytes.');
      const tokenHash = Buffer.from(request.tokenSha256);
      await endSession(deps.db, request.userId, tokenHash, now());
      // Every edge caches the session by its hash; drop it everywhere at once.
      await deps.pubsub.publish(KEY_REVOKED_CHANNEL, tokenHash.toString('hex'));
      return {};
    },
  };
}
