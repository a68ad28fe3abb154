module.exports = { ...require('../../jest.preset.js'), displayName: 'scopes', rootDir: __dirname };
