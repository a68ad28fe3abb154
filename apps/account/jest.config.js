module.exports = { ...require('../../jest.preset.js'), displayName: 'account', rootDir: __dirname };
