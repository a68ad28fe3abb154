module.exports = { ...require('../../jest.preset.js'), displayName: 'pagination', rootDir: __dirname };
