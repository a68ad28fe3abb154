module.exports = { ...require('../../jest.preset.js'), displayName: 'catalog', rootDir: __dirname };
