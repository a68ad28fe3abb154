/**
 * Who runs the service: the users named in X_BUILDS_ADMIN_USER_IDS, or, when that list is empty, the
 * bootstrap owner alone. Decided here once and carried on the principal (`operator`), so no route or other
 * service re-derives it. Only an operator holds `builds:admin`; operators may also aim endpoints at loopback
 * and private addresses.
 */
export interface Operators {
  isOperator(userId: string): boolean;
}

export function createOperators(options: { adminUserIds: readonly string[]; ownerId?: string }): Operators {
  // An empty list never means "everyone": it means the owner, and with no owner known, no one.
  const named = new Set(
    options.adminUserIds.length > 0 ? options.adminUserIds : options.ownerId ? [options.ownerId] : [],
  );
  return {
    isOperator: (userId) => userId !== '' && named.has(userId),
  };
}
