module.exports = { ...require('../../jest.preset.js'), displayName: 'agent-setup', rootDir: __dirname };
