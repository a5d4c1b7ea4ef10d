#!/bin/sh
echo "old version"
