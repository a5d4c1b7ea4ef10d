const express = require("express");
const { timeout } = require('../config.json');
module.exports = { timeout };
