module.exports = { ...require('../../jest.preset.js'), displayName: 'logging', rootDir: __dirname };
