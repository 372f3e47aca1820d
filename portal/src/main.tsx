import { render } from 'preact';
import './style.css';
import { App } from './app.tsx';

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
