module.exports = { ...require('../../jest.preset.js'), displayName: 'egress', rootDir: __dirname };
