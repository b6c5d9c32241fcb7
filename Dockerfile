# Build a wheel in one stage, install it into a slim runtime image in the next.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine engine
COPY ai ai
COPY bot bot
COPY locales locales
COPY sandbox sandbox
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN useradd --create-home --uid 10001 durak
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER durak
WORKDIR /home/durak
# Configuration comes from the environment (see .env.example).
CMD ["durak-bot"]
