module.exports = { ...require('../../jest.preset.js'), displayName: 'bus', rootDir: __dirname };
