module.exports = { ...require('../../jest.preset.js'), displayName: 'service-docs', rootDir: __dirname };
