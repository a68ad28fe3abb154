import { createOperators } from './operators';

describe('operators', () => {
  it('are the users X_BUILDS_ADMIN_USER_IDS names, and then not the bootstrap owner', () => {
    const operators = createOperators({ adminUserIds: ['usr_a', 'usr_b'], ownerId: 'usr_owner' });
    expect(['usr_a', 'usr_b', 'usr_owner', 'usr_other'].map((id) => operators.isOperator(id))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('are the bootstrap owner alone when the list is empty, never everyone', () => {
    const operators = createOperators({ adminUserIds: [], ownerId: 'usr_owner' });
    expect(operators.isOperator('usr_owner')).toBe(true);
    expect(operators.isOperator('usr_other')).toBe(false);
  });

  it('are no one when the list is empty and there is no owner', () => {
    const operators = createOperators({ adminUserIds: [] });
    expect(operators.isOperator('usr_any')).toBe(false);
    expect(operators.isOperator('')).toBe(false);
  });
});
