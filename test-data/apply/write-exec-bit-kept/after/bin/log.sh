#!/bin/sh
echo appended
