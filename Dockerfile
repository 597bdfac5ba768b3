# The race server with its web client; the SQLite database lives on the /data volume.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY server server
COPY migrations migrations
COPY client client
# Editable install: the server finds migrations/ and client/web/ next to its sources.
RUN pip install --no-cache-dir -e .
VOLUME /data
EXPOSE 8765
CMD ["solitaire-race", "serve", "--host", "0.0.0.0", "--port", "8765", "--db", "sqlite+aiosqlite:////data/solitaire-race.sqlite3"]
