module.exports = { ...require('../../jest.preset.js'), displayName: 'usage-ledger', rootDir: __dirname };
