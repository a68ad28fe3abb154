module.exports = { ...require('../../jest.preset.js'), displayName: 'budget-periods', rootDir: __dirname };
