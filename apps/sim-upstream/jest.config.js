module.exports = { ...require('../../jest.preset.js'), displayName: 'sim-upstream', rootDir: __dirname };
