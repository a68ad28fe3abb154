module.exports = { ...require('../../jest.preset.js'), displayName: 'guardrails', rootDir: __dirname };
