@echo off
echo old
pause
