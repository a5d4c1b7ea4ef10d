@echo off
npm run build:old
