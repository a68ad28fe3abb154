module.exports = { ...require('../../jest.preset.js'), displayName: 'rpc', rootDir: __dirname };
