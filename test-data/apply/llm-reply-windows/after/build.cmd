@echo off
npm run build
