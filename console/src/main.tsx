import { render } from 'preact';
import { App } from './app';
import './styles.css';

const root = document.getElementById('app')!;

/** Never a blank page: anything that escapes the app is said in the page itself. */
function fatal(message: string) {
  root.replaceChildren();
  const box = document.createElement('div');
  box.className = 'note error fatal';
  box.setAttribute('role', 'alert');
  const text = document.createElement('p');
  text.textContent = `The console stopped: ${message}`;
  const again = document.createElement('button');
  again.type = 'button';
  again.textContent = 'Reload the console';
  again.addEventListener('click', () => location.reload());
  box.append(text, again);
  root.append(box);
}

try {
  root.replaceChildren();
  render(<App />, root);
} catch (err) {
  fatal(err instanceof Error ? err.message : String(err));
}
