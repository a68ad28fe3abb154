module.exports = { ...require('../../jest.preset.js'), displayName: 'mcp-access', rootDir: __dirname };
