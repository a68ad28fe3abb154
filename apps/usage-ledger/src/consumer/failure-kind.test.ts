import { classifyLedgerFailure, describeFailure } from './failure-kind';

/** An error shaped as Prisma's driver adapters wrap a database error: the SQLSTATE some layers down. */
const wrapped = (code: string, message = 'query failed') =>
  Object.assign(new Error(message), {
    code: 'P2010',
    meta: { driverAdapterError: { cause: { kind: 'postgres', originalCode: code, message } } },
  });

describe('classifyLedgerFailure', () => {
  it('a value the database refuses (SQLSTATE class 22 or 23) is data: parking it is safe', () => {
    expect(classifyLedgerFailure(wrapped('22P05'))).toBe('data');
    expect(
      classifyLedgerFailure(Object.assign(new Error('time zone displacement out of range'), { code: '22009' })),
    ).toBe('data');
    expect(classifyLedgerFailure(new Error('Raw query failed. Code: `23505`. Message: duplicate key'))).toBe('data');
  });

  it('a database that is down, restarting or overloaded is transient: never parked', () => {
    expect(
      classifyLedgerFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    ).toBe('transient');
    expect(
      classifyLedgerFailure(new Error('wrapper', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) })),
    ).toBe('transient');
    expect(classifyLedgerFailure(wrapped('57P01', 'terminating connection due to administrator command'))).toBe(
      'transient',
    );
    expect(classifyLedgerFailure(wrapped('40P01', 'deadlock detected'))).toBe('transient');
    expect(classifyLedgerFailure(Object.assign(new Error('pool timeout'), { code: 'P2024' }))).toBe('transient');
    expect(classifyLedgerFailure({ kind: 'DatabaseNotReachable' })).toBe('transient');
  });

  it('a connection that did not come in time, or a transaction that could not run in time, is transient', () => {
    const poolTimeout = new Error('timeout exceeded when trying to connect');
    expect(
      classifyLedgerFailure(new Error('Invalid `prisma.$queryRawUnsafe()` invocation', { cause: poolTimeout })),
    ).toBe('transient');
    expect(classifyLedgerFailure(new Error('Connection terminated due to connection timeout'))).toBe('transient');
    expect(classifyLedgerFailure(wrapped('57014', 'canceling statement due to statement timeout'))).toBe('transient');
    expect(
      classifyLedgerFailure(
        Object.assign(new Error('Transaction API error: Transaction already closed'), { code: 'P2028' }),
      ),
    ).toBe('transient');
  });

  it('anything else is unknown, left to the neighbours test', () => {
    expect(classifyLedgerFailure(new Error('something odd'))).toBe('unknown');
    expect(classifyLedgerFailure('a string')).toBe('unknown');
    expect(classifyLedgerFailure(undefined)).toBe('unknown');
  });
});

describe('describeFailure', () => {
  it('puts the SQLSTATE in front of the message when the message does not carry it', () => {
    expect(describeFailure(wrapped('22P05', 'unsupported Unicode escape sequence'))).toBe(
      '22P05: unsupported Unicode escape sequence',
    );
    expect(describeFailure(new Error('Raw query failed. Code: `22P05`.'))).toBe('Raw query failed. Code: `22P05`.');
    expect(describeFailure('plain')).toBe('plain');
  });
});
