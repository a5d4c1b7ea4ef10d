@echo off
echo new
