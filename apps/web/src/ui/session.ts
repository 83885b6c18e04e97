// The API token lives in sessionStorage only: it is gone when the tab closes and never reaches
// localStorage or a cookie.
const KEY = 'erg.token';

export function loadToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
