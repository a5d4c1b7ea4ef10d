// lib
