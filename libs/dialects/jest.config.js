module.exports = { ...require('../../jest.preset.js'), displayName: 'dialects', rootDir: __dirname };
