import { render } from 'preact';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { App } from './app.tsx';

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
