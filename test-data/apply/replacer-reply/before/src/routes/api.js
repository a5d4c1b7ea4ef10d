const express = require("express");
const timeout = 3000;
module.exports = { timeout };
