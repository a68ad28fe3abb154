module.exports = { ...require('../../jest.preset.js'), displayName: 'x-builds', rootDir: __dirname };
