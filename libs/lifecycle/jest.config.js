module.exports = { ...require('../../jest.preset.js'), displayName: 'lifecycle', rootDir: __dirname };
