
module.exports = {};
