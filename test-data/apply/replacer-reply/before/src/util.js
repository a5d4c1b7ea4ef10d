function legacyTimeout() {
  return 3000;
}
module.exports = {};
