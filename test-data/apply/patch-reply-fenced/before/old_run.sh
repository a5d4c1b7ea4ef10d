#!/bin/sh
python app.py
