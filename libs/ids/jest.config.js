module.exports = { ...require('../../jest.preset.js'), displayName: 'ids', rootDir: __dirname };
