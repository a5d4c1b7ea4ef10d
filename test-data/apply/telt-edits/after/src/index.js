import React from 'react';
import ReactDOM from 'react-dom/client';
