module.exports = { ...require('../../jest.preset.js'), displayName: 'embedded', rootDir: __dirname };
