#!/bin/sh
echo "new version"
