module.exports = { ...require('../../jest.preset.js'), displayName: 'route-health', rootDir: __dirname };
